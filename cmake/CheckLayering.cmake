# Fails configuration if a file of the compiler half (ir, multidevice,
# segment, host_ir, autodiff), of the kernels layer or of runtime/streams includes an
# ATen, c10, torch or oneDNN header (oneDNN is the runtime's: dnnl_matmul). The same script
# runs as a CTest test (tests/CMakeLists.txt) so a violation also fails CI.
function(hostir_check_layering src_root)
  set(violations "")
  foreach(layer ir multidevice segment host_ir autodiff compiler kernels runtime/streams)
    file(GLOB_RECURSE files "${src_root}/${layer}/*.h" "${src_root}/${layer}/*.cpp")
    foreach(f ${files})
      file(STRINGS "${f}" hits REGEX "#include *[<\"]((ATen|c10|torch|oneapi)/|dnnl)")
      if(hits)
        list(APPEND violations "${f}: ${hits}")
      endif()
    endforeach()
  endforeach()
  if(violations)
    message(FATAL_ERROR "ATen/c10/torch/oneDNN headers below runtime/ (see DESIGN.md layering):\n${violations}")
  endif()
endfunction()

if(CMAKE_SCRIPT_MODE_FILE AND HOSTIR_SRC_ROOT)
  hostir_check_layering(${HOSTIR_SRC_ROOT})
  message(STATUS "layering OK")
endif()
