# Sanitizer and coverage flags for the project's own code (docs/hardening.md).
#
# ATTN_SANITIZE (a -fsanitize= list) and ATTN_FUZZ are applied per directory,
# not through CMAKE_CXX_FLAGS: the CUDA kernels (kernels/) and the C runtime
# that attn-compile links into user libraries (AttnRuntime) stay plain, so an
# AOT library still links into a program built without sanitizers.

set(ATTN_INSTRUMENT_COMPILE_FLAGS "")
set(ATTN_INSTRUMENT_LINK_FLAGS "")

if(ATTN_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "ATTN_FUZZ needs clang (libFuzzer): configure with "
            "CC=clang-22 CXX=clang++-22")
  endif()
  if(NOT ATTN_SANITIZE)
    set(ATTN_SANITIZE "address,undefined" CACHE STRING
        "-fsanitize= list for the project's own code" FORCE)
    message(STATUS "AttnFuse: ATTN_FUZZ without ATTN_SANITIZE, using ${ATTN_SANITIZE}")
  endif()
endif()

if(ATTN_SANITIZE)
  # -fno-sanitize-recover: a UBSan report stops the program (and fails the
  # test) instead of printing and going on. Line tables give located reports.
  # -O1 (after the build type's -O3 on the command line, so it wins): what
  # the sanitizers' documentation recommends, and it compiles much faster
  # than -O3, which the CI time depends on (docs/hardening.md).
  list(APPEND ATTN_INSTRUMENT_COMPILE_FLAGS
    -fsanitize=${ATTN_SANITIZE} -fno-sanitize-recover=all
    -fno-omit-frame-pointer -O1)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    list(APPEND ATTN_INSTRUMENT_COMPILE_FLAGS -gline-tables-only)
  else()
    list(APPEND ATTN_INSTRUMENT_COMPILE_FLAGS -g1)
  endif()
  list(APPEND ATTN_INSTRUMENT_LINK_FLAGS -fsanitize=${ATTN_SANITIZE})
  message(STATUS "AttnFuse: -fsanitize=${ATTN_SANITIZE} on lib/, tools/, fuzz/ "
          "(not kernels/, not AttnRuntime)")
endif()
if(ATTN_FUZZ)
  # Coverage feedback for libFuzzer from all of the project's code; the
  # sanitizer runtime provides the hooks in the plain tools.
  list(APPEND ATTN_INSTRUMENT_COMPILE_FLAGS -fsanitize=fuzzer-no-link)
endif()

# Adds (ON) or removes (OFF) the flags on the current directory; targets and
# subdirectories created afterwards inherit the directory's state.
function(attn_instrument_directory enable)
  get_directory_property(compile COMPILE_OPTIONS)
  get_directory_property(link LINK_OPTIONS)
  foreach(flag IN LISTS ATTN_INSTRUMENT_COMPILE_FLAGS)
    list(REMOVE_ITEM compile ${flag})
  endforeach()
  foreach(flag IN LISTS ATTN_INSTRUMENT_LINK_FLAGS)
    list(REMOVE_ITEM link ${flag})
  endforeach()
  if(enable)
    list(APPEND compile ${ATTN_INSTRUMENT_COMPILE_FLAGS})
    list(APPEND link ${ATTN_INSTRUMENT_LINK_FLAGS})
  endif()
  set_property(DIRECTORY PROPERTY COMPILE_OPTIONS ${compile})
  set_property(DIRECTORY PROPERTY LINK_OPTIONS ${link})
endfunction()

# Takes the flags off one target that was created in an instrumented
# directory.
function(attn_uninstrument_target target)
  if(NOT TARGET ${target})
    return()
  endif()
  get_target_property(compile ${target} COMPILE_OPTIONS)
  if(compile)
    foreach(flag IN LISTS ATTN_INSTRUMENT_COMPILE_FLAGS)
      list(REMOVE_ITEM compile ${flag})
    endforeach()
    set_property(TARGET ${target} PROPERTY COMPILE_OPTIONS ${compile})
  endif()
endfunction()
