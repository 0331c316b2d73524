# -DHOSTIR_SANITIZE=address,undefined: build every hostir target with
# AddressSanitizer and UndefinedBehaviorSanitizer (issue 22). Use a build
# folder of its own (`./hostir.sh test` uses build-sanitize). libtorch, Gloo
# and Halide come from Debian uninstrumented: ASan still checks every hostir
# access and replaces malloc for the whole process; UBSan checks hostir code.
# -fno-sanitize-recover: undefined behaviour ends the test instead of
# printing a line a passing test would hide. -O1 with frame pointers keeps
# the tests fast enough and the reports' stacks whole. -g1 (line tables, no
# variables) is all a report's stack needs, and compiles in about 3/4 of the
# time -g takes (executor.cpp: 23-26 s against 32-42 s).

set(HOSTIR_SANITIZE "" CACHE STRING
    "Sanitizers for every hostir target: address, undefined or address,undefined")

if(HOSTIR_SANITIZE)
  string(REPLACE "," ";" hostir_sanitizers "${HOSTIR_SANITIZE}")
  foreach(sanitizer IN LISTS hostir_sanitizers)
    if(NOT sanitizer MATCHES "^(address|undefined)$")
      message(FATAL_ERROR "HOSTIR_SANITIZE='${HOSTIR_SANITIZE}': '${sanitizer}' is not supported; "
                          "give address, undefined or address,undefined (ThreadSanitizer is "
                          "-DHOSTIR_TSAN=ON, in a build of its own)")
    endif()
  endforeach()
  if(HOSTIR_TSAN)
    message(FATAL_ERROR "HOSTIR_SANITIZE and HOSTIR_TSAN cannot be combined: ThreadSanitizer "
                        "excludes AddressSanitizer; use two build folders")
  endif()
  add_compile_options(-fsanitize=${HOSTIR_SANITIZE} -fno-sanitize-recover=all
                      -fno-omit-frame-pointer -g1 -O1)
  add_link_options(-fsanitize=${HOSTIR_SANITIZE})
endif()
