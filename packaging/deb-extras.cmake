# deb-extras.cmake - a CPack pre-build script (CPACK_PRE_BUILD_SCRIPTS, cmake/Package.cmake): adds
# to the staged tree, after cmake --install and before the .deb is made, the files only a Debian
# package wants, so that cmake --install into a prefix stays free of them:
#   /usr/share/doc/gpuprio/copyright            the machine-readable copyright (packaging/copyright)
#   /usr/share/doc/gpuprio/changelog.gz         a native package's changelog, in Debian format
#   /usr/share/lintian/overrides/gpuprio        packaging/lintian-overrides, each with its reason
#   /usr/lib/tmpfiles.d/gpuprio.conf            makes /run/gpuprio (root's, 1777) at boot
# It runs inside cpack, with the CPACK_* variables of CPackConfig.cmake; for another generator
# (cpack -G TGZ) it does nothing.
if(NOT CPACK_GENERATOR STREQUAL "DEB")
  return()
endif()
set(_root "${CPACK_TEMPORARY_DIRECTORY}${CPACK_PACKAGING_INSTALL_PREFIX}")
if(NOT IS_DIRECTORY "${_root}")
  message(FATAL_ERROR "deb-extras: the staged tree ${_root} is not there")
endif()
set(_doc "${_root}/${CPACK_GPUPRIO_DOCDIR}")
set(_dir "${CPACK_GPUPRIO_PACKAGING_DIR}")
set(_perm OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)

# configure_file, not file(INSTALL): cpack still has DESTDIR set here (CPACK_SET_DESTDIR), and
# file(INSTALL) would put the files under DESTDIR a second time.
configure_file("${_dir}/copyright" "${_doc}/copyright" COPYONLY)
configure_file("${_dir}/lintian-overrides" "${_root}/share/lintian/overrides/${CPACK_PACKAGE_NAME}"
               COPYONLY)
file(CHMOD "${_doc}/copyright" "${_root}/share/lintian/overrides/${CPACK_PACKAGE_NAME}"
     PERMISSIONS ${_perm})
file(CHMOD "${_root}/share/lintian" "${_root}/share/lintian/overrides" PERMISSIONS ${_perm}
     OWNER_EXECUTE GROUP_EXECUTE WORLD_EXECUTE)

# The changelog: one entry for the version packaged, as the project keeps its history in git.
# Its date honours SOURCE_DATE_EPOCH (string(TIMESTAMP) does; scripts/package.sh sets it from the
# last commit), so the same commit gives the same changelog. gzip -9n: the maximum compression
# lintian asks for, without a name or time in the header.
string(TIMESTAMP _date "%a, %d %b %Y %H:%M:%S +0000" UTC)
file(WRITE "${_doc}/changelog"
"${CPACK_PACKAGE_NAME} (${CPACK_PACKAGE_VERSION}) unstable; urgency=medium

  * Package of gpuprio ${CPACK_PACKAGE_VERSION}, built from its source tree with CPack
    (scripts/package.sh). The changes are in the project's git history.

 -- ${CPACK_DEBIAN_PACKAGE_MAINTAINER}  ${_date}
")
execute_process(COMMAND gzip -9nf "${_doc}/changelog" RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "deb-extras: gzip -9n ${_doc}/changelog failed: ${_rc}")
endif()
file(CHMOD "${_doc}/changelog.gz" PERMISSIONS ${_perm})

# /run/gpuprio at every boot (a tmpfs on most systems), as configuration.md sets the shared board
# directory up: root's, sticky, open to all (d: made if absent, never emptied).
file(MAKE_DIRECTORY "${_root}/lib/tmpfiles.d")
file(WRITE "${_root}/lib/tmpfiles.d/gpuprio.conf"
"# gpuprio's shared board directory (/etc/gpuprio.conf, board_dir): root's, sticky, open to all
d /run/gpuprio 1777 root root -
")
file(CHMOD "${_root}/lib/tmpfiles.d/gpuprio.conf" PERMISSIONS ${_perm})
file(CHMOD "${_root}/lib/tmpfiles.d" PERMISSIONS ${_perm} OWNER_EXECUTE GROUP_EXECUTE WORLD_EXECUTE)
