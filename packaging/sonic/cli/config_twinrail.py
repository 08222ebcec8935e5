"""`config twinrail hostrouted|pathqd FIELD VALUE`: a few fields of HOSTROUTED|global and
PATHQD|global, checked before they reach CONFIG_DB, as a sonic-utilities config plugin.

sonic-package-manager copies this one file to config/plugins/twinrail.py, and `config`
calls register(cli) with its root group, whose ctx.obj is utilities_common.db.Db: its
`cfgdb` is a connected ConfigDBConnector (get_entry, mod_entry). Nothing of SONiC is
imported here, so a test hands the commands any object with those two methods.

The daemons watch CONFIG_DB and apply a change at once (or keep the last good config and
log why). The checks below are the daemons' own ranges (daemons/*/config.cpp), so a value
refused here would have been refused there; the plugin only says so earlier, naming the
table, key and field. Integers only: no signs, no exponents, no leading zeros.
Exit codes: 0 written, 65 value refused (sysexits EX_DATAERR).
"""

import re

import click

EX_DATAERR = 65
INTEGER = re.compile(r"^(0|[1-9][0-9]{0,9})$")

# field -> ("int", low, high) or ("enum", choices). Each table's key is `global`.
FIELDS = {
    "HOSTROUTED": {
        "keepalive": ("int", 0, 3600),
        "holdtime": ("int", 1, 86400),
        "max_routes": ("int", 1, 10000000),
        "max_routes_per_port": ("int", 1, 10000000),
        "route_rate": ("int", 1, 10000000),
        "route_burst": ("int", 1, 10000000),
        "audit_interval": ("int", 0, 86400),
        "advertise": ("enum", ("import-table", "table-direct", "network-table")),
    },
    "PATHQD": {
        "sample_interval_ms": ("int", 10, 10000),
        "levels": ("int", 2, 100),
        "min_hold_ms": ("int", 0, 3600000),
        "raise_hold_ms": ("int", 0, 3600000),
        "weight_audit_interval": ("int", 0, 86400),
        "weight_audit_source": ("enum", ("kernel", "sonic")),
    },
}

# What a daemon assumes for a field CONFIG_DB does not hold (the schemas' defaults).
DEFAULTS = {"HOSTROUTED": {"keepalive": "3", "holdtime": "9"}}


def check_value(table, field, value):
    """None if `value` may be written to <table>|global <field>, else why not."""
    spec = FIELDS[table][field]
    if spec[0] == "enum":
        if value not in spec[1]:
            return f"{value!r} is not one of {', '.join(spec[1])}"
        return None
    _, low, high = spec
    if not INTEGER.match(value) or not low <= int(value) <= high:
        return f"{value!r} is not an integer from {low} to {high}"
    return None


def check_row(table, row):
    """Rules across fields of one row, on the row as it would be after the change."""
    if table == "HOSTROUTED":
        keepalive, holdtime = int(row["keepalive"]), int(row["holdtime"])
        if keepalive > 0 and holdtime < 2 * keepalive:
            return (f"holdtime {holdtime} must be at least twice keepalive {keepalive}, "
                    "so one lost probe is not a withdrawal")
    return None


def refuse(where, why):
    click.echo(f"Error: {where}: {why}", err=True)
    raise click.exceptions.Exit(EX_DATAERR)


def set_field(cfgdb, table, field, value):
    where = f"{table}|global {field}"
    why = check_value(table, field, value)
    if why:
        refuse(where, why)
    current = cfgdb.get_entry(table, "global") or {}
    after = dict(DEFAULTS.get(table, {}))
    after.update({k: v for k, v in current.items() if k in after and INTEGER.match(str(v))})
    after[field] = value
    why = check_row(table, after)
    if why:
        refuse(where, why)
    cfgdb.mod_entry(table, "global", {field: value})
    click.echo(f"{where} = {value}")


def field_command(table, field):
    spec = FIELDS[table][field]
    accepted = (", ".join(spec[1]) if spec[0] == "enum" else f"{spec[1]}..{spec[2]}")

    # ignore_unknown_options: "-1" is a value to refuse with its field named, not an option.
    @click.command(name=field.replace("_", "-"), help=f"Set {table}|global {field} ({accepted})",
                   context_settings={"ignore_unknown_options": True})
    @click.argument("value")
    @click.pass_context
    def command(ctx, value):
        set_field(ctx.obj.cfgdb, table, field, value)

    return command


@click.group(name="twinrail")
def twinrail():
    """twinrail: hostrouted and pathqd settings (CONFIG_DB HOSTROUTED, PATHQD)"""


def table_group(table):
    group = click.Group(name=table.lower(), help=f"Fields of CONFIG_DB {table}|global")
    for field in FIELDS[table]:
        group.add_command(field_command(table, field))
    return group


for _table in FIELDS:
    twinrail.add_command(table_group(_table))


def register(cli):
    """Called by sonic-utilities' config with its root group."""
    if twinrail.name in cli.commands:
        raise Exception(f"{twinrail.name} already exists in CLI")
    cli.add_command(twinrail)
