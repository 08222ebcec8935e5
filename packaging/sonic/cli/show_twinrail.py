"""`show twinrail ...`: twinrail's STATE_DB tables, as a sonic-utilities show plugin.

sonic-package-manager copies this one file to show/plugins/twinrail.py on the switch, and
`show` calls register(cli) with its root group. The root sets ctx.obj to
utilities_common.db.Db, whose `db` attribute is a SonicV2Connector already connected to
STATE_DB: every command takes it from the click context, so this module imports nothing
of SONiC and a test can hand it any object with keys()/get_all() instead.

Rows come from STATE_DB, which any process on the switch may write: values are printed
with control characters replaced, so a row cannot drive the operator's terminal.
"""

import ipaddress
import re

import click

STATE_DB = "STATE_DB"
SEPARATOR = "|"  # STATE_DB's key separator: TABLE|key


def clean(value):
    """A STATE_DB value made safe for a terminal: no control characters, one line."""
    return re.sub(r"[\x00-\x1f\x7f-\x9f]", "?", str(value))


def natural_key(text):
    """Ethernet8 before Ethernet16: runs of digits compare as numbers."""
    return [(0, int(part), "") if part.isdigit() else (1, 0, part)
            for part in re.split(r"(\d+)", text) if part]


def address_key(text):
    """IPv4 before IPv6, each in numeric order; a key that is no address goes last."""
    try:
        address = ipaddress.ip_address(text)
        return (address.version, int(address), "")
    except ValueError:
        return (7, 0, text)


def read_table(state_db, table):
    """{key without the table prefix: {field: value}} of one STATE_DB table."""
    rows = {}
    for full_key in state_db.keys(STATE_DB, table + SEPARATOR + "*") or []:
        key = full_key.split(SEPARATOR, 1)[1] if SEPARATOR in full_key else ""
        rows[key] = state_db.get_all(STATE_DB, full_key) or {}
    return rows


def render(header, body):
    """Columns padded to their widest cell, like tabulate's "simple" format."""
    cells = [[clean(c) for c in row] for row in [header] + body]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def state_db_of(ctx):
    return ctx.obj.db


@click.group(name="twinrail")
def twinrail():
    """twinrail: host routes (hostrouted) and path quality (pathqd)"""


@twinrail.command()
@click.option("--interface", "-i", help="only hosts on this port or SVI")
@click.option("--state", type=click.Choice(["installed", "pending", "unresponsive", "failed"]),
              help="only hosts in this state")
@click.pass_context
def hosts(ctx, interface, state):
    """Hosts routed by hostrouted (STATE_DB HOST_ROUTE_TABLE)"""
    rows = read_table(state_db_of(ctx), "HOST_ROUTE_TABLE")
    body = []
    for address in sorted(rows, key=address_key):
        row = rows[address]
        if interface and row.get("ifname") != interface:
            continue
        if state and row.get("state") != state:
            continue
        body.append([address] + [row.get(f, "") for f in
                                 ("ifname", "mac", "state", "neigh_state", "source", "since")])
    click.echo(render(["Address", "Interface", "MAC", "State", "Neighbor", "Source", "Since"],
                      body))
    click.echo(f"\nTotal hosts: {len(body)}")


@twinrail.command()
@click.pass_context
def claims(ctx):
    """Address claims hostrouted refused (STATE_DB HOST_CLAIM_TABLE)"""
    rows = read_table(state_db_of(ctx), "HOST_CLAIM_TABLE")
    body = []
    for key in rows:
        address, _, port = key.partition(SEPARATOR)
        row = rows[key]
        body.append([address, port] + [row.get(f, "") for f in
                                       ("mac", "reason", "count", "first", "last")])
    body.sort(key=lambda r: (address_key(r[0]), natural_key(r[1])))
    click.echo(render(["Address", "Port", "MAC", "Reason", "Count", "First", "Last"], body))


@twinrail.command()
@click.pass_context
def quality(ctx):
    """Measured quality of the fabric ports (STATE_DB PATH_QUALITY_TABLE)"""
    rows = read_table(state_db_of(ctx), "PATH_QUALITY_TABLE")
    body = []
    for port in sorted(rows, key=natural_key):
        row = rows[port]
        level = row.get("level", "")
        if row.get("levels"):
            level += "/" + row["levels"]
        body.append([port, row.get("role", ""), row.get("oper_status", ""), level,
                     row.get("util", ""), row.get("congestion", ""), row.get("latency_ns", ""),
                     row.get("last_change", "")])
    click.echo(render(["Port", "Role", "Oper", "Level", "Util", "Congestion", "Latency ns",
                       "Last change"], body))


@twinrail.command()
@click.pass_context
def weights(ctx):
    """Weighted multipath groups in force (STATE_DB PATH_WEIGHT_TABLE)"""
    rows = read_table(state_db_of(ctx), "PATH_WEIGHT_TABLE")
    body = []
    for key in sorted(rows, key=natural_key):
        row = rows[key]
        body.append([row.get("nexthops", key), row.get("prefixes", ""), row.get("sample", "")])
    click.echo(render(["Next hops (device=weight)", "Prefixes", "Sample"], body))


def register(cli):
    """Called by sonic-utilities' show with its root group."""
    if twinrail.name in cli.commands:
        raise Exception(f"{twinrail.name} already exists in CLI")
    cli.add_command(twinrail)
