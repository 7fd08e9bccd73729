# Helpers that keep each folder's CMakeLists.txt to a few lines.

# Warnings are errors on our own code only; third-party headers come in as SYSTEM includes.
set(PODSIM_WARNINGS -Wall -Wextra -Werror)
# Sanitized code is built at -Og: GCC's UndefinedBehaviorSanitizer doubles a file's compile time
# at -O1 (its null and alignment checks on every member access), and at -Og a library file
# compiled in 16 s against 36 s, every check kept, in code nearly as fast as -O1's.
set(PODSIM_SANITIZER_FLAGS -Og -fsanitize=address,undefined -fno-omit-frame-pointer
                           -fno-sanitize-recover=undefined)

# Options shared by every podsim target.
function(podsim_target_defaults target)
  target_compile_options(${target} PRIVATE ${PODSIM_WARNINGS})
  if(PODSIM_SANITIZE)
    target_compile_options(${target} PRIVATE ${PODSIM_SANITIZER_FLAGS})
    # With the sanitizers GCC stops passing --as-needed, and libsystemc.so's reference to
    # sc_main would then have to resolve in plain test binaries that never use the kernel.
    target_link_options(${target} PRIVATE ${PODSIM_SANITIZER_FLAGS} -Wl,--as-needed)
  endif()
endfunction()

# podsim_add_library(<name> SOURCES ... [DEPS ...])
# One static library per folder; headers are included as "core/units.h" from the repo root.
function(podsim_add_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
  podsim_target_defaults(${name})
endfunction()

# podsim_add_test(<name> SOURCES ... [DEPS ...] [SYSTEMC | RUNS <target>...])
# Plain tests: many per binary, gtest_main. SYSTEMC tests: the binary's sc_main comes from
# podsim_test_sc_main, and ctest runs each TEST in its own process because a SystemC kernel
# cannot elaborate twice in one process. RUNS: the test starts these programs (podsim, a
# benchmark), which are built first.
# ctest labels: unit (plain tests that run only their own code), systemc, cli (RUNS); the
# target unit_tests builds the unit tests alone (make sanitize runs them).
# What test code compiles with: the code under test is optimised in its libraries, so the tests'
# own code (mostly GoogleTest, fmt and json templates) is built at -O0. A clean `make test` on
# two cores took 12m05s against 12m53s at -O1 (their template instantiation, not optimisation,
# is most of a test file's cost), and the suite runs as fast (about 60 s either way).
function(podsim_test_defaults target)
  podsim_target_defaults(${target})
  # The same code model for the precompiled header and every test (the libraries are PIC for
  # the driver shim; tests need not be).
  set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE OFF)
  # Sanitized too: a test file took 22 s at -O0 against 25 s at -Og and 54 s at -O1.
  target_compile_options(${target} PRIVATE -O0)
endfunction()

function(podsim_add_test name)
  cmake_parse_arguments(ARG "SYSTEMC" "" "SOURCES;DEPS;RUNS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  podsim_test_defaults(${name})
  # The headers every test includes, parsed once (tests/support/CMakeLists.txt).
  target_precompile_headers(${name} REUSE_FROM podsim_test_pch)
  # Only libsystemc.so refers to sc_main, and it comes after the static archive that defines
  # it on the link line, so the linker must be told to pull sc_main in up front: the SystemC
  # tests' real one, or for plain tests one that is never called.
  target_link_options(${name} PRIVATE "LINKER:--undefined=sc_main")
  if(ARG_SYSTEMC)
    target_link_libraries(${name} PRIVATE ${ARG_DEPS} podsim_test_sc_main GTest::gmock)
  else()
    target_link_libraries(${name} PRIVATE ${ARG_DEPS} podsim_test_support podsim_plain_sc_main
                                          GTest::gmock GTest::gtest_main)
  endif()
  if(ARG_SYSTEMC)
    set(label systemc)
  elseif(ARG_RUNS)
    set(label cli)
    add_dependencies(${name} ${ARG_RUNS})
    foreach(program ${ARG_RUNS})
      string(TOUPPER ${program} macro)
      target_compile_definitions(${name} PRIVATE ${macro}_BINARY="$<TARGET_FILE:${program}>")
    endforeach()
  else()
    set(label unit)
    set_property(GLOBAL APPEND PROPERTY PODSIM_UNIT_TESTS ${name})
  endif()
  gtest_discover_tests(${name}
    DISCOVERY_TIMEOUT 60
    PROPERTIES ENVIRONMENT SC_COPYRIGHT_MESSAGE=DISABLE
               TIMEOUT 300 LABELS ${label})
endfunction()
