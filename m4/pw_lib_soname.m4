# PW_LIB_SONAME(MACRO, LIBS, FUNCTION, LIBNAME, FALLBACK)
# ------------------------------------------------------
# Define MACRO to the soname a program linked with LIBS loads for LIBNAME
# (e.g. libcurl.so.4), read off a linked test program's NEEDED entries, so
# that dlopen asks for exactly the library the build was checked against.
# FALLBACK when objdump cannot tell.
AC_DEFUN([PW_LIB_SONAME], [
  AC_REQUIRE([PW_PROG_OBJDUMP])
  AC_CACHE_CHECK([which $4 soname to load], [pw_cv_soname_$1], [
    pw_save_LIBS=$LIBS
    LIBS="$2 $LIBS"
    pw_cv_soname_$1=
    AC_LINK_IFELSE([AC_LANG_CALL([], [$3])], [
      pw_cv_soname_$1=`$OBJDUMP -p conftest$EXEEXT 2>/dev/null |
        sed -n 's/^ *NEEDED *\($4\.so[[^ ]]*\).*/\1/p' | sed -n 1p`])
    LIBS=$pw_save_LIBS
    AS_IF([test -z "$pw_cv_soname_$1"], [pw_cv_soname_$1=$5])
  ])
  AC_DEFINE_UNQUOTED([$1], ["$pw_cv_soname_$1"], [the $4 soname pyward loads on first use])
])

AC_DEFUN([PW_PROG_OBJDUMP], [AC_CHECK_TOOL([OBJDUMP], [objdump], [false])])
