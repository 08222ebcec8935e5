#!/usr/bin/python3
"""Generates the SONiC Application Extension manifest and image labels of twinrail.

Everything comes from the files the .deb is built from, so the two cannot drift:
  - name and version: the first line of debian/changelog;
  - description: the synopsis of `Package: twinrail` in debian/control;
  - no init-cfg: what a switch needs there depends on its release and plan, which the
    planner's overlay writes (manifest.in.json "//init-cfg");
  - the YANG labels: proto/<module>.yang, byte for byte;
  - the rest (depends, service, container, processes, cli): manifest.in.json.

Writes OUT_DIR/manifest.json and OUT_DIR/labels.json ({label: value}). Standard library
only, so it runs with Debian's /usr/bin/python3. Exit codes (sysexits): 64 usage, 65 bad
data (names the file and field), 66 missing input, 73 cannot write.
"""

import argparse
import json
import os
import re
import sys

EX_USAGE, EX_DATAERR, EX_NOINPUT, EX_CANTCREAT = 64, 65, 66, 73

# SemVer 2.0 core (sonic-package-manager parses versions with semantic_version). A Debian
# revision ("0.1.0-1") would read as a pre-release, older than 0.1.0: refused, not mapped.
SEMVER = re.compile(r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$")
PACKAGE_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")  # also a container and unit name
MODULE_NAME = re.compile(r"^sonic-[a-z0-9-]{1,60}$")  # no '.': labels split on dots


class InputError(Exception):
    """A source file is missing or wrong; carries the sysexits code."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def read_text(path):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as err:
        raise InputError(EX_NOINPUT, f"{path}: {err.strerror}") from err
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise InputError(EX_DATAERR, f"{path}: not UTF-8 ({err})") from err


def read_json(path):
    try:
        return json.loads(read_text(path))
    except json.JSONDecodeError as err:
        raise InputError(EX_DATAERR, f"{path}: not JSON: line {err.lineno}: {err.msg}") from err


def changelog_name_version(path):
    """`twinrail (0.1.0) unstable; urgency=medium` -> ("twinrail", "0.1.0")."""
    first = read_text(path).split("\n", 1)[0]
    match = re.match(r"^(\S+) \(([^)]*)\) ", first)
    if not match:
        raise InputError(EX_DATAERR, f"{path}: line 1: not 'name (version) distribution;'")
    name, version = match.groups()
    if not PACKAGE_NAME.match(name):
        raise InputError(EX_DATAERR, f"{path}: line 1: package name {name!r} is not [a-z0-9_-]")
    if not SEMVER.match(version):
        raise InputError(
            EX_DATAERR,
            f"{path}: line 1: version {version!r} is not MAJOR.MINOR.PATCH "
            "(sonic-package-manager orders versions by SemVer)")
    return name, version


def control_synopsis(path, package):
    """The one-line Description of the binary package `package` in debian/control."""
    current = None
    for line in read_text(path).splitlines():
        if line.startswith("Package:"):
            current = line.split(":", 1)[1].strip()
        elif current == package and line.startswith("Description:"):
            synopsis = line.split(":", 1)[1].strip()
            if synopsis:
                return synopsis
    raise InputError(EX_DATAERR, f"{path}: no 'Description:' for Package: {package}")


def yang_labels(yang_dir, modules):
    """{"com.azure.sonic.yang-module.<module>": text of <yang_dir>/<module>.yang}."""
    labels = {}
    for module in modules:
        if not MODULE_NAME.match(module):
            raise InputError(EX_DATAERR, f"yang-modules: {module!r} is not sonic-<name>")
        path = os.path.join(yang_dir, f"{module}.yang")
        text = read_text(path)
        declared = re.search(r"^\s*module\s+([A-Za-z0-9_.-]+)\s*\{", text, re.MULTILINE)
        if not declared or declared.group(1) != module:
            raise InputError(EX_DATAERR, f"{path}: does not declare 'module {module} {{'")
        labels[f"com.azure.sonic.yang-module.{module}"] = text
    return labels


def strip_comments(node):
    """Drops the '//' keys of manifest.in.json, which hold the reasons for its choices."""
    if isinstance(node, dict):
        return {k: strip_comments(v) for k, v in node.items() if not k.startswith("//")}
    if isinstance(node, list):
        return [strip_comments(v) for v in node]
    return node


def build(source_dir, yang_dir, template_path):
    template = strip_comments(read_json(template_path))
    if not isinstance(template, dict):
        raise InputError(EX_DATAERR, f"{template_path}: not a JSON object")
    name, version = changelog_name_version(os.path.join(source_dir, "debian", "changelog"))
    description = control_synopsis(os.path.join(source_dir, "debian", "control"), name)
    if "init-cfg-sonic" in template or "init-cfg" in template.get("package", {}):
        raise InputError(EX_DATAERR, f"{template_path}: init-cfg: none, ever (see its //init-cfg)")
    modules = template.pop("yang-modules", [])
    manifest = template
    package = manifest.setdefault("package", {})
    package.update({"name": name, "version": version, "description": description})
    manifest.setdefault("service", {})["name"] = name
    labels = {"com.azure.sonic.manifest": json.dumps(manifest, sort_keys=True)}
    labels.update(yang_labels(yang_dir, modules))
    return manifest, labels


def write_json(path, doc):
    try:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=2, sort_keys=True)
            f.write("\n")
    except OSError as err:
        raise InputError(EX_CANTCREAT, f"{path}: {err.strerror}") from err


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--source-dir", default=os.path.dirname(os.path.dirname(here)),
                        help="the twinrail tree (default: two levels above this script)")
    parser.add_argument("--yang-dir", help="where <module>.yang are (default: SOURCE/proto)")
    parser.add_argument("--template", default=os.path.join(here, "manifest.in.json"))
    parser.add_argument("--out-dir", required=True)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return EX_USAGE if exit_.code else 0
    yang_dir = args.yang_dir or os.path.join(args.source_dir, "proto")
    try:
        manifest, labels = build(args.source_dir, yang_dir, args.template)
        write_json(os.path.join(args.out_dir, "manifest.json"), manifest)
        write_json(os.path.join(args.out_dir, "labels.json"), labels)
    except InputError as err:
        print(f"gen_manifest: {err}", file=sys.stderr)
        return err.code
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
