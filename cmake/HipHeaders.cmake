# HipHeaders.cmake: where the HIP headers are, and which HIP they are.
#
# gpuprio needs only HIP's headers to build: the shim never links libamdhip64 (it finds the
# runtime the program loaded), so neither hipcc nor the HIP runtime is needed. Looked for, first
# found wins:
#   1. GPUPRIO_HIP_INCLUDE_DIR, a directory holding hip/hip_runtime_api.h, if given;
#   2. HIP_PATH, then ROCM_PATH (a CMake variable, else the environment variable): the prefix of
#      the hip-config.cmake under it (PREFIX/lib/cmake/hip, as AMD's packages install HIP in
#      /opt/rocm-X.Y.Z, or PREFIX/lib/ARCH/cmake/hip, as Debian's), else PREFIX/include;
#   3. hip_DIR (the directory of hip-config.cmake): its prefix's include;
#   4. each CMAKE_PREFIX_PATH entry (the CMake variable, then the environment variable): the
#      prefix of its hip-config.cmake, else its include;
#   5. /opt/rocm, AMD's default, the same way;
#   6. the system's: the prefix of a hip-config.cmake in /usr/local or /usr (Debian's
#      libamdhip64-dev: /usr/lib/ARCH/cmake/hip), else the system's include directories.
# hip-config.cmake is only found, never run: it defines AMD's targets and insists on hipcc and
# the HIP compilers, which a C library built with gcc or clang does not need; gpuprio takes only
# the include directory (PREFIX/include, where hip-config.cmake's own hip_INCLUDE_DIR points) and
# the version (hip/hip_version.h). A HIP_PATH or ROCM_PATH without the headers, or a
# hip-config.cmake whose prefix has none, is a warning, and the search goes on.
#
# Sets GPUPRIO_WITH_HIP, GPUPRIO_HIP_INCLUDE_DIR, GPUPRIO_HIP_VERSION (MAJOR.MINOR.PATCH from
# hip/hip_version.h), GPUPRIO_HIP_FOUND_BY (how, in words; printed) and the interface target
# gpuprio_hip_headers, which adds the directory as a system one (the headers are not ours to warn
# about: 6.4's declare `hipProfilerStart()`).

set(HIP_PATH "" CACHE PATH "HIP installation prefix (PREFIX/include/hip); else $ENV{HIP_PATH}")
set(ROCM_PATH "" CACHE PATH "ROCm installation prefix (PREFIX/include/hip); else $ENV{ROCM_PATH}")

# The hip-config.cmake under PREFIX (AMD's lib/cmake/hip, Debian's lib/ARCH/cmake/hip, lib64),
# or "".
function(_gp_hip_config_under prefix out)
  set(_found "")
  foreach(_sub lib/cmake/hip lib/${CMAKE_LIBRARY_ARCHITECTURE}/cmake/hip lib64/cmake/hip)
    if(EXISTS "${prefix}/${_sub}/hip-config.cmake")
      get_filename_component(_found "${prefix}/${_sub}/hip-config.cmake" ABSOLUTE)
      break()
    endif()
  endforeach()
  set(${out} "${_found}" PARENT_SCOPE)
endfunction()

# The include directory of the prefix hip-config.cmake in CONFIG_DIR belongs to: three levels up
# (PREFIX/lib/cmake/hip) or four (PREFIX/lib/ARCH/cmake/hip), as hip-config.cmake itself reckons;
# "" with a warning where that prefix has no hip/hip_runtime_api.h.
function(_gp_hip_config_include config_dir out)
  set(_inc "")
  foreach(_up ../../.. ../../../..)
    get_filename_component(_p "${config_dir}/${_up}/include" ABSOLUTE)
    if(EXISTS "${_p}/hip/hip_runtime_api.h")
      set(_inc "${_p}")
      break()
    endif()
  endforeach()
  if(NOT _inc)
    message(WARNING "${config_dir}/hip-config.cmake: its prefix has no "
                    "include/hip/hip_runtime_api.h; looking elsewhere")
  endif()
  set(${out} "${_inc}" PARENT_SCOPE)
endfunction()

# The candidates, in order: a directory holding hip/hip_runtime_api.h each, and how it was found.
set(_gp_hip_hints "")
set(_gp_hip_whys "")
macro(_gp_hip_candidate dir why)
  get_filename_component(_d "${dir}" ABSOLUTE)
  list(APPEND _gp_hip_hints "${_d}")
  list(APPEND _gp_hip_whys "${why}")
endmacro()
# A prefix: its hip-config.cmake if it has one, else PREFIX/include. Sets _gp_ok.
macro(_gp_hip_prefix prefix what)
  set(_gp_ok FALSE)
  _gp_hip_config_under("${prefix}" _cfg)
  if(_cfg)
    get_filename_component(_cfg_dir "${_cfg}" DIRECTORY)
    _gp_hip_config_include("${_cfg_dir}" _inc)
    if(_inc)
      _gp_hip_candidate("${_inc}" "${what}: hip-config.cmake ${_cfg}")
      set(_gp_ok TRUE)
    endif()
  endif()
  if(NOT _gp_ok AND EXISTS "${prefix}/include/hip/hip_runtime_api.h")
    _gp_hip_candidate("${prefix}/include" "${what}: ${prefix}/include (no hip-config.cmake)")
    set(_gp_ok TRUE)
  endif()
endmacro()

foreach(_v HIP_PATH ROCM_PATH)
  set(_p "${${_v}}")
  if(NOT _p AND DEFINED ENV{${_v}})
    set(_p "$ENV{${_v}}")
  endif()
  if(_p)
    _gp_hip_prefix("${_p}" "${_v}=${_p}")
    if(NOT _gp_ok)
      message(WARNING "${_v}=${_p} has no include/hip/hip_runtime_api.h; looking elsewhere")
    endif()
  endif()
endforeach()
if(hip_DIR AND EXISTS "${hip_DIR}/hip-config.cmake")
  _gp_hip_config_include("${hip_DIR}" _inc)
  if(_inc)
    _gp_hip_candidate("${_inc}" "hip_DIR: hip-config.cmake ${hip_DIR}/hip-config.cmake")
  endif()
endif()
set(_gp_prefixes ${CMAKE_PREFIX_PATH})
if(DEFINED ENV{CMAKE_PREFIX_PATH})
  string(REPLACE ":" ";" _p "$ENV{CMAKE_PREFIX_PATH}")
  list(APPEND _gp_prefixes ${_p})
endif()
foreach(_p IN LISTS _gp_prefixes)
  _gp_hip_prefix("${_p}" "CMAKE_PREFIX_PATH")
endforeach()
_gp_hip_prefix(/opt/rocm "/opt/rocm")
foreach(_p /usr/local /usr)
  _gp_hip_config_under("${_p}" _cfg)
  if(_cfg)
    _gp_hip_prefix("${_p}" "the system's")
  endif()
endforeach()

# A changed HIP_PATH, ROCM_PATH, hip_DIR or CMAKE_PREFIX_PATH on a later configure looks again
# (find_path's result is cached); a GPUPRIO_HIP_INCLUDE_DIR given on the first configure is kept.
if(DEFINED _GPUPRIO_HIP_HINTS AND NOT "${_gp_hip_hints}" STREQUAL "${_GPUPRIO_HIP_HINTS}")
  unset(GPUPRIO_HIP_INCLUDE_DIR CACHE)
endif()
set(_GPUPRIO_HIP_HINTS "${_gp_hip_hints}" CACHE INTERNAL "where HIP was looked for")
# Given by hand: set, and not what an earlier configure found.
set(_gp_given FALSE)
if(GPUPRIO_HIP_INCLUDE_DIR
   AND NOT "${GPUPRIO_HIP_INCLUDE_DIR}" STREQUAL "${_GPUPRIO_HIP_FOUND_DIR}")
  set(_gp_given TRUE)
endif()

# The candidates first, in their order (find_path would otherwise look in CMAKE_PREFIX_PATH
# before its hints), then the system's include directories.
set(_gp_hip_doc "Directory holding hip/hip_runtime_api.h (see cmake/HipHeaders.cmake)")
if(_gp_hip_hints)
  find_path(GPUPRIO_HIP_INCLUDE_DIR hip/hip_runtime_api.h HINTS ${_gp_hip_hints} NO_DEFAULT_PATH
            DOC "${_gp_hip_doc}")
endif()
find_path(GPUPRIO_HIP_INCLUDE_DIR hip/hip_runtime_api.h DOC "${_gp_hip_doc}")

set(GPUPRIO_WITH_HIP OFF)
set(GPUPRIO_HIP_VERSION "")
set(GPUPRIO_HIP_FOUND_BY "")
if(GPUPRIO_HIP_INCLUDE_DIR)
  # How: given by hand, a candidate, as an earlier configure found it, or the system's.
  get_filename_component(_dir "${GPUPRIO_HIP_INCLUDE_DIR}" ABSOLUTE)
  list(FIND _gp_hip_hints "${_dir}" _i)
  if(_gp_given)
    set(GPUPRIO_HIP_FOUND_BY "GPUPRIO_HIP_INCLUDE_DIR")
  elseif(_i GREATER -1)
    list(GET _gp_hip_whys ${_i} GPUPRIO_HIP_FOUND_BY)
  elseif("${GPUPRIO_HIP_INCLUDE_DIR}" STREQUAL "${_GPUPRIO_HIP_FOUND_DIR}"
         AND _GPUPRIO_HIP_FOUND_BY)
    set(GPUPRIO_HIP_FOUND_BY "${_GPUPRIO_HIP_FOUND_BY}")
  else()
    set(GPUPRIO_HIP_FOUND_BY "the system's include directories (no hip-config.cmake)")
  endif()
  set(_GPUPRIO_HIP_FOUND_DIR "${GPUPRIO_HIP_INCLUDE_DIR}" CACHE INTERNAL "")
  set(_GPUPRIO_HIP_FOUND_BY "${GPUPRIO_HIP_FOUND_BY}" CACHE INTERNAL "")

  set(GPUPRIO_WITH_HIP ON)
  set(_h "${GPUPRIO_HIP_INCLUDE_DIR}/hip/hip_version.h")
  if(EXISTS "${_h}")
    foreach(_part MAJOR MINOR PATCH)
      file(STRINGS "${_h}" _line REGEX "^#define HIP_VERSION_${_part} +[0-9]+")
      string(REGEX REPLACE ".* ([0-9]+).*" "\\1" _n "${_line}")
      list(APPEND GPUPRIO_HIP_VERSION "${_n}")
    endforeach()
    list(JOIN GPUPRIO_HIP_VERSION "." GPUPRIO_HIP_VERSION)
  else()
    set(GPUPRIO_HIP_VERSION "unknown (no hip/hip_version.h)")
  endif()
  message(STATUS "HIP headers: ${GPUPRIO_HIP_INCLUDE_DIR}/hip, HIP ${GPUPRIO_HIP_VERSION} "
                 "(from ${GPUPRIO_HIP_FOUND_BY}; choose with -DHIP_PATH=PREFIX, "
                 "-DROCM_PATH=PREFIX, -DCMAKE_PREFIX_PATH=PREFIX or "
                 "-DGPUPRIO_HIP_INCLUDE_DIR=DIR)")
  add_library(gpuprio_hip_headers INTERFACE)
  target_include_directories(gpuprio_hip_headers SYSTEM INTERFACE ${GPUPRIO_HIP_INCLUDE_DIR})
endif()
