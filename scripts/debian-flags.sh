# Sourced by scripts/build.sh and scripts/package.sh: the compile flags Debian's package build
# uses (dpkg-buildflags with debian/rules' own DEB_* settings, read from that file so there is
# one source), and a ccache launcher shared by build/ and the package build.
#
# Why: the package stage compiled every product file a second time (about 400 s of the test
# command on 2 cores). build/ now compiles the product with exactly the flags the package
# uses, through ccache with its cache in build/ccache, its base directory the checkout, and
# the build directory left out of the hash; scripts/package.sh builds its copy of the source
# inside build/, one level below, so the compile commands are the same after ccache makes
# paths relative, and every product object is a cache hit. A fresh clone starts with an
# empty cache: nothing is reused from an earlier run. Depend mode: on a miss (every file of a
# fresh clone) ccache reads the headers from the compiler's own -MD output instead of running
# the preprocessor a second time.
# Sets: TWINRAIL_DEB_CXXFLAGS, TWINRAIL_CCACHE_LAUNCHER (empty without ccache).
twinrail_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
twinrail_debian_flags() {
  # debian/rules: "export DEB_X = value" lines.
  local assignments
  assignments=$(sed -n 's/^export \(DEB_[A-Z_]*\) = \(.*\)$/\1=\2/p' "$twinrail_root/debian/rules")
  # CMake gets no CPPFLAGS: debhelper appends them to CXXFLAGS, and so does this.
  (cd "$twinrail_root" && env $assignments sh -c \
    'echo "$(dpkg-buildflags --get CXXFLAGS) $(dpkg-buildflags --get CPPFLAGS)"')
}
TWINRAIL_DEB_CXXFLAGS=$(twinrail_debian_flags)
TWINRAIL_CCACHE_LAUNCHER=
if command -v ccache >/dev/null; then
  TWINRAIL_CCACHE_LAUNCHER="env;CCACHE_DIR=$twinrail_root/build/ccache;CCACHE_BASEDIR=$twinrail_root;CCACHE_NOHASHDIR=true;CCACHE_DEPEND=true;CCACHE_MAXSIZE=4G;ccache"
fi
