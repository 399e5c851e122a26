# Unity builds of the targets with many translation units.
#
# Parsing MLIR's dialect headers (their generated op classes) is most of the
# compile time of each of our files: about 12 of the 13 CPU seconds of
# SdpaFlashToCpu.cpp with g++ -O3. Compiling a target's files in batches of
# ATTN_UNITY_BATCH parses the headers once per batch instead of once per
# file, in the normal and in the sanitizer build (docs/hardening.md, "CI
# time"). Precompiled headers were measured and rejected: g++ took 92 CPU
# seconds and 1 GB to precompile them per target. ATTN_UNITY_BUILD=OFF
# compiles file by file (a missing include then shows).

option(ATTN_UNITY_BUILD "Compile the larger targets in batches of files" ON)
set(ATTN_UNITY_BATCH 6 CACHE STRING "Files per batch of a unity build")

function(attn_unity_build)
  if(NOT ATTN_UNITY_BUILD)
    return()
  endif()
  foreach(target ${ARGN})
    if(TARGET ${target})
      set_target_properties(${target} PROPERTIES UNITY_BUILD ON
        UNITY_BUILD_BATCH_SIZE ${ATTN_UNITY_BATCH})
    endif()
  endforeach()
endfunction()
