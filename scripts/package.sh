#!/bin/bash
# Builds the Debian package from this tree (dpkg-buildpackage -us -uc -b, in a copy, since
# it writes next to the source) and checks it:
#   - the files it must install are in it, and nothing of the namespace lab (lab/, a tool:
#     the package holds only what runs on a switch or a server);
#   - lintian reports no errors;
#   - systemd-analyze verify passes for both units, and security --offline gives each an
#     exposure of at most 2.5.
# With --install (CI does this on its throwaway machine) it also installs the package,
# checks the user and the enabled-but-not-started units, and purges it again.
# Leaves the .deb in build/deb/.
set -euo pipefail
cd "$(dirname "$0")/.."
install_test=no
[ "${1:-}" = --install ] && install_test=yes
# The copy lives in build/, one level below the checkout like build/ itself, so that ccache
# sees the same compile commands as build/'s and reuses its objects (scripts/debian-flags.sh).
source scripts/debian-flags.sh
mkdir -p build
work=$(mktemp -d "$PWD/build/pkg.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/src"
git ls-files -z --cached --others --exclude-standard | xargs -0 cp -a --parents -t "$work/src"
echo "== building the package (log: build/deb/build.log)"
mkdir -p build/deb
# debian/rules configures without the tests and the lab. nocheck: there is nothing for
# dh_auto_test to run; noautodbgsym: no -dbgsym package, which nothing here checks.
started=$SECONDS
if ! (cd "$work/src" && DEB_BUILD_OPTIONS="nocheck noautodbgsym" \
      TWINRAIL_CCACHE_LAUNCHER="$TWINRAIL_CCACHE_LAUNCHER" \
      dpkg-buildpackage -us -uc -b -j"$(nproc)") >build/deb/build.log 2>&1; then
  tail -40 build/deb/build.log
  exit 1
fi
echo "  built in $((SECONDS - started)) s"
deb=$(ls "$work"/twinrail_*.deb)
cp "$deb" build/deb/
fail=0
echo "== contents"
dpkg-deb -c "$deb" | awk '{print $6}' | sed 's#^\./#/#' >"$work/contents"
for f in /usr/sbin/hostrouted /usr/sbin/pathqd /usr/bin/twinrail /usr/bin/twinrail-plan \
         /lib/systemd/system/hostrouted.service \
         /lib/systemd/system/pathqd.service /etc/default/hostrouted /etc/default/pathqd \
         /etc/twinrail/hostrouted.json /etc/twinrail/pathqd.json /usr/lib/sysusers.d/twinrail.conf \
         /usr/share/man/man1/twinrail.1.gz /usr/share/man/man1/twinrail-plan.1.gz \
         /usr/share/man/man8/hostrouted.8.gz \
         /usr/share/man/man8/pathqd.8.gz /usr/sbin/planesteer /lib/systemd/system/planesteer.service \
         /etc/default/planesteer /etc/twinrail/planesteer.json /usr/share/man/man8/planesteer.8.gz \
         /usr/sbin/arsd /lib/systemd/system/arsd.service /etc/default/arsd /etc/twinrail/arsd.json \
         /usr/share/man/man8/arsd.8.gz; do
  if grep -qx "$f" "$work/contents"; then echo "  ok $f"; else echo "  MISSING $f"; fail=1; fi
done
# The lab is a tool, not product: no file of it (twinrail-lab, its man page, anything
# named lab) may be in the package.
echo "== no lab files"
if grep -i 'lab' "$work/contents" | sed 's/^/  LAB FILE /' | grep .; then
  fail=1
else
  echo "  ok: no file name matches lab"
fi
echo "== lintian"
if ! lintian --fail-on error --suppress-tags-from-file /dev/null "$deb"; then fail=1; fi
echo "== systemd units"
dpkg-deb -x "$deb" "$work/root"
for unit in hostrouted pathqd planesteer arsd; do
  file="$work/root/lib/systemd/system/$unit.service"
  # verify checks ExecStart= against the running system: point it at the extracted binary.
  mkdir -p "$work/units"
  sed "s#/usr/sbin/#$work/root/usr/sbin/#" "$file" >"$work/units/$unit.service"
  if systemd-analyze verify --man=no "$work/units/$unit.service" &&
     man --warnings -l "$work/root/usr/share/man/man8/$unit.8.gz" >/dev/null; then
    echo "  verify $unit.service: ok"
  else
    echo "  verify $unit.service: FAILED"; fail=1
  fi
  score=$(systemd-analyze security --offline=true --root="$work/root" "$file" 2>/dev/null |
          sed -n 's/.*Overall exposure level for .*: \([0-9.]*\).*/\1/p')
  echo "  exposure $unit.service: $score (at most 2.5)"
  awk -v s="$score" 'BEGIN { exit !(s != "" && s <= 2.5) }' || fail=1
done
if [ "$install_test" = yes ]; then
  echo "== install, check, purge"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$PWD/build/deb/$(basename "$deb")" >/dev/null
  getent passwd twinrail >/dev/null && echo "  user twinrail: ok" || { echo "  user twinrail: MISSING"; fail=1; }
  for unit in hostrouted pathqd planesteer arsd; do
    if [ -L "/etc/systemd/system/multi-user.target.wants/$unit.service" ]; then
      echo "  $unit enabled: ok"
    else
      echo "  $unit enabled: NO"; fail=1
    fi
    if pgrep -x "$unit" >/dev/null; then echo "  $unit started before being configured"; fail=1; fi
  done
  systemd-analyze verify /lib/systemd/system/hostrouted.service /lib/systemd/system/pathqd.service \
    /lib/systemd/system/planesteer.service /lib/systemd/system/arsd.service || fail=1
  man -w hostrouted >/dev/null && man -w planesteer >/dev/null && man -w twinrail >/dev/null ||
    fail=1
  DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq twinrail >/dev/null
  [ ! -e /usr/sbin/hostrouted ] && [ ! -e /etc/default/hostrouted ] && echo "  purged: ok" ||
    { echo "  purge left files"; fail=1; }
fi
[ "$fail" = 0 ] && echo "== package OK: build/deb/$(basename "$deb")" || echo "== package checks FAILED"
exit "$fail"
