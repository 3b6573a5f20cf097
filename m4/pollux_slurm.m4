# SPDX-License-Identifier: GPL-2.0-or-later
# POLLUX_WITH_SLURM: locate Slurm's headers (--with-slurm=DIR, default /usr) and the plugin
# directory (--with-slurm-plugindir, default that Slurm's own: DIR/lib/slurm, or Debian's
# multiarch slurm-wlm dir). The plugin must be built against the exact Slurm release it is
# loaded into, so the version is reported, and only the tested releases are accepted.
AC_DEFUN([POLLUX_WITH_SLURM], [
  AC_ARG_WITH([slurm],
    [AS_HELP_STRING([--with-slurm=DIR], [Slurm installation prefix (default /usr)])],
    [SLURM_PREFIX="$withval"], [SLURM_PREFIX=/usr])
  AS_IF([test ! -f "$SLURM_PREFIX/include/slurm/slurm.h"],
    [AC_MSG_ERROR([Slurm headers not found in $SLURM_PREFIX/include/slurm: install libslurm-dev or pass --with-slurm=DIR])])
  SLURM_CPPFLAGS="-I$SLURM_PREFIX/include"
  pollux_saved_CPPFLAGS="$CPPFLAGS"
  CPPFLAGS="$CPPFLAGS $SLURM_CPPFLAGS"
  AC_COMPUTE_INT([SLURM_VERSION_NUMBER], [SLURM_VERSION_NUMBER], [#include <slurm/slurm_version.h>],
    [AC_MSG_ERROR([cannot read SLURM_VERSION_NUMBER from slurm/slurm_version.h])])
  CPPFLAGS="$pollux_saved_CPPFLAGS"
  SLURM_VERSION_STRING=`printf '%d.%02d.%d' $((SLURM_VERSION_NUMBER >> 16)) $(((SLURM_VERSION_NUMBER >> 8) & 255)) $((SLURM_VERSION_NUMBER & 255))`
  SLURM_VERSION_NUMBER=`printf '0x%06x' $SLURM_VERSION_NUMBER`
  AC_MSG_NOTICE([found Slurm $SLURM_VERSION_STRING in $SLURM_PREFIX])

  # The releases every real-cluster test passes on (scripts/test-releases).
  pollux_tested_slurm="22.05 24.11 25.11 26.05"
  AC_ARG_ENABLE([untested-slurm],
    [AS_HELP_STRING([--enable-untested-slurm],
      [build against a Slurm release other than the tested ones (22.05, 24.11, 25.11, 26.05)])],
    [], [enable_untested_slurm=no])
  pollux_slurm_release=`echo "$SLURM_VERSION_STRING" | cut -d. -f1-2`
  AS_CASE([" $pollux_tested_slurm "],
    [*" $pollux_slurm_release "*], [],
    [AS_IF([test "x$enable_untested_slurm" = xyes],
      [AC_MSG_WARN([Slurm $SLURM_VERSION_STRING is not a tested release ($pollux_tested_slurm): building anyway (--enable-untested-slurm)])],
      [AC_MSG_ERROR([Slurm $SLURM_VERSION_STRING in $SLURM_PREFIX is not a tested release; tested: $pollux_tested_slurm (--enable-untested-slurm builds anyway)])])])

  pollux_multiarch=`$CC -print-multiarch 2>/dev/null`
  pollux_default_plugindir="$SLURM_PREFIX/lib/slurm"
  AS_IF([test -n "$pollux_multiarch" && test -d "$SLURM_PREFIX/lib/$pollux_multiarch/slurm-wlm"],
    [pollux_default_plugindir="$SLURM_PREFIX/lib/$pollux_multiarch/slurm-wlm"])
  AC_ARG_WITH([slurm-plugindir],
    [AS_HELP_STRING([--with-slurm-plugindir=DIR],
      [where Slurm loads plugins from (default: DIR/lib/slurm of --with-slurm, or Debian's /usr/lib/MULTIARCH/slurm-wlm)])],
    [SLURM_PLUGINDIR="$withval"], [SLURM_PLUGINDIR="$pollux_default_plugindir"])
  # The plugins take libslurm's symbols from slurmctld; only the shim's unit test links it.
  AS_IF([test -f "$SLURM_PREFIX/lib/libslurm.so"],
    [SLURM_LIBS="-L$SLURM_PREFIX/lib -Wl,-rpath,$SLURM_PREFIX/lib -lslurm"],
    [SLURM_LIBS="-lslurm"])
  AC_SUBST([SLURM_PREFIX])
  AC_SUBST([SLURM_CPPFLAGS])
  AC_SUBST([SLURM_LIBS])
  AC_SUBST([SLURM_VERSION_NUMBER])
  AC_SUBST([SLURM_VERSION_STRING])
  AC_SUBST([SLURM_PLUGINDIR])
])

# POLLUX_REQUIRE_LIB(VAR, HEADER, LIB, FUNCTION, DEBIAN-PACKAGE): a library without pkg-config.
AC_DEFUN([POLLUX_REQUIRE_LIB], [
  AC_CHECK_HEADER([$2], [],
    [AC_MSG_ERROR([$2 not found: install $5 (scripts/install-deps installs every dependency)])])
  AC_CHECK_LIB([$3], [$4], [$1_LIBS="-l$3"],
    [AC_MSG_ERROR([lib$3 not found: install $5 (scripts/install-deps installs every dependency)])])
  AC_SUBST([$1_LIBS])
])

# POLLUX_REQUIRE_PKG(VAR, MODULE, NAME, DEBIAN-PACKAGE): a library found through pkg-config.
AC_DEFUN([POLLUX_REQUIRE_PKG], [
  PKG_CHECK_MODULES([$1], [$2], [],
    [AC_MSG_ERROR([$3 ($2) not found: install $4 (scripts/install-deps installs every dependency)])])
])

# POLLUX_COMPILER_FLAGS: warnings, optional -Werror (CI), and hardening as pyxis does.
AC_DEFUN([POLLUX_COMPILER_FLAGS], [
  AC_ARG_ENABLE([werror],
    [AS_HELP_STRING([--enable-werror], [treat compiler warnings as errors (CI builds)])],
    [], [enable_werror=no])
  POLLUX_CXXFLAGS="-Wall -Wextra -fstack-protector-strong -fno-strict-aliasing"
  AS_IF([test "x$enable_werror" = xyes], [POLLUX_CXXFLAGS="$POLLUX_CXXFLAGS -Werror"])
  POLLUX_CPPFLAGS="-D_FORTIFY_SOURCE=2"
  POLLUX_LDFLAGS="-Wl,-z,relro -Wl,-z,now"
  AC_ARG_ENABLE([sanitizers],
    [AS_HELP_STRING([--enable-sanitizers],
      [build with AddressSanitizer and UndefinedBehaviorSanitizer (tests; not for slurmctld)])],
    [], [enable_sanitizers=no])
  AS_IF([test "x$enable_sanitizers" = xyes], [
    # GCC 12 reports false maybe-uninitialized warnings inside libstdc++ under ASan.
    POLLUX_CXXFLAGS="$POLLUX_CXXFLAGS -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -Wno-maybe-uninitialized"
    POLLUX_CPPFLAGS=""  # _FORTIFY_SOURCE and ASan check the same calls differently
    POLLUX_LDFLAGS="$POLLUX_LDFLAGS -fsanitize=address,undefined"])
  AC_SUBST([POLLUX_CXXFLAGS])
  AC_SUBST([POLLUX_CPPFLAGS])
  AC_SUBST([POLLUX_LDFLAGS])
])

# POLLUX_REAL_SCONTROL: the scontrol the wrapper execs. The wrapper is installed as
# SCONTROL_WRAPPER_DIR/scontrol (--with-scontrol-wrapper-dir, default $bindir), which must be a
# different file that comes first in PATH; packages put it in a directory of their own.
AC_DEFUN([POLLUX_REAL_SCONTROL], [
  AC_PATH_PROG([REAL_SCONTROL], [scontrol], [], [$SLURM_PREFIX/bin:$PATH])
  AS_IF([test -z "$REAL_SCONTROL"],
    [AC_MSG_ERROR([scontrol not found in $SLURM_PREFIX/bin or PATH: install slurm-client])])
  AC_ARG_WITH([scontrol-wrapper-dir],
    [AS_HELP_STRING([--with-scontrol-wrapper-dir=DIR],
      [where the scontrol wrapper installs (default BINDIR; Debian's package: /usr/libexec/pollux-slurm)])],
    [SCONTROL_WRAPPER_DIR="$withval"], [SCONTROL_WRAPPER_DIR='${bindir}'])
  # Expanded as make will (${bindir} -> ${exec_prefix}/bin -> ${prefix}/bin -> PREFIX/bin);
  # configure leaves prefix and exec_prefix NONE until AC_OUTPUT when they are not given.
  pollux_wrapper=$(
    test "x$prefix" = xNONE && prefix=$ac_default_prefix
    test "x$exec_prefix" = xNONE && exec_prefix=$prefix
    pollux_path="$SCONTROL_WRAPPER_DIR/scontrol"
    for pollux_level in 1 2 3 4 5; do pollux_path=$(eval echo "$pollux_path"); done
    echo "$pollux_path")
  AS_IF([test "$pollux_wrapper" = "$REAL_SCONTROL"],
    [AC_MSG_ERROR([the scontrol wrapper would overwrite $REAL_SCONTROL: use a --prefix (or --bindir, or --with-scontrol-wrapper-dir) other than Slurm's, e.g. the default /usr/local])])
  AC_SUBST([REAL_SCONTROL])
  AC_SUBST([SCONTROL_WRAPPER_DIR])
])
