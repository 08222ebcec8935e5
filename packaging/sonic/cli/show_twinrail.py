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


def print_table(ctx, table, header, cells, order=natural_key):
    """Prints one STATE_DB table as columns: cells(key, row) for each row, the rows in
    `order` of their keys; a row whose cells are None is left out. Returns how many rows
    were printed."""
    rows = read_table(state_db_of(ctx), table)
    body = [c for c in (cells(key, rows[key]) for key in sorted(rows, key=order))
            if c is not None]
    click.echo(render(header, body))
    return len(body)


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
    def cells(address, row):
        if interface and row.get("ifname") != interface:
            return None
        if state and row.get("state") != state:
            return None
        return [address] + [row.get(f, "") for f in
                            ("ifname", "mac", "state", "neigh_state", "source", "since")]
    shown = print_table(ctx, "HOST_ROUTE_TABLE",
                        ["Address", "Interface", "MAC", "State", "Neighbor", "Source", "Since"],
                        cells, order=address_key)
    click.echo(f"\nTotal hosts: {shown}")


def claim_key(key):
    """HOST_CLAIM_TABLE's address|port: by address, then port."""
    address, _, port = key.partition(SEPARATOR)
    return (address_key(address), natural_key(port))


@twinrail.command()
@click.pass_context
def claims(ctx):
    """Address claims hostrouted refused (STATE_DB HOST_CLAIM_TABLE)"""
    def cells(key, row):
        address, _, port = key.partition(SEPARATOR)
        return [address, port] + [row.get(f, "") for f in
                                  ("mac", "reason", "count", "first", "last")]
    print_table(ctx, "HOST_CLAIM_TABLE",
                ["Address", "Port", "MAC", "Reason", "Count", "First", "Last"], cells,
                order=claim_key)


@twinrail.command()
@click.pass_context
def quality(ctx):
    """Measured quality of the fabric ports (STATE_DB PATH_QUALITY_TABLE)"""
    def cells(port, row):
        level = row.get("level", "")
        if row.get("levels"):
            level += "/" + row["levels"]
        return [port, row.get("role", ""), row.get("oper_status", ""), level,
                row.get("util", ""), row.get("congestion", ""), row.get("latency_ns", ""),
                row.get("last_change", "")]
    print_table(ctx, "PATH_QUALITY_TABLE",
                ["Port", "Role", "Oper", "Level", "Util", "Congestion", "Latency ns",
                 "Last change"], cells)


@twinrail.command()
@click.pass_context
def weights(ctx):
    """Weighted multipath groups in force (STATE_DB PATH_WEIGHT_TABLE)"""
    def cells(key, row):
        return [row.get("nexthops", key), row.get("prefixes", ""), row.get("sample", "")]
    print_table(ctx, "PATH_WEIGHT_TABLE", ["Next hops (device=weight)", "Prefixes", "Sample"],
                cells)


def register(cli):
    """Called by sonic-utilities' show with its root group."""
    if twinrail.name in cli.commands:
        raise Exception(f"{twinrail.name} already exists in CLI")
    cli.add_command(twinrail)
