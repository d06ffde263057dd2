# Passed as -DCMAKE_PROJECT_INCLUDE=<this file> when building an interface package against
# the ROS 2 PyPI wheels. Those wheels were built in a manylinux image and their exported
# CMake targets name include directories under /opt/python/... (CPython and numpy headers)
# that do not exist here; CMake's generate step then fails with
#   Imported target "..." includes non-existent path "/opt/python/cp311-cp311/include/...".
# At the end of configure (deferred, CMake >= 3.19) replace those entries of every imported
# target of the top directory with the current Python's and numpy's include directories.
include_guard(GLOBAL)
if(CMAKE_VERSION VERSION_LESS 3.19)
  message(FATAL_ERROR "fix_manylinux_includes.cmake needs CMake 3.19 or newer (cmake_language(DEFER))")
endif()

function(_ros_wheels_fix_manylinux_includes)
  find_package(Python3 REQUIRED COMPONENTS Interpreter Development.Module NumPy)
  set(_replacement ${Python3_INCLUDE_DIRS} ${Python3_NumPy_INCLUDE_DIRS})
  get_property(_targets DIRECTORY "${CMAKE_SOURCE_DIR}" PROPERTY IMPORTED_TARGETS)
  set(_fixed 0)
  foreach(_target IN LISTS _targets)
    get_target_property(_dirs ${_target} INTERFACE_INCLUDE_DIRECTORIES)
    if(NOT _dirs OR NOT "${_dirs}" MATCHES "/opt/python/")
      continue()
    endif()
    set(_new_dirs "")
    set(_replaced FALSE)
    foreach(_dir IN LISTS _dirs)
      if(_dir MATCHES "/opt/python/")
        if(NOT _replaced)
          list(APPEND _new_dirs ${_replacement})
          set(_replaced TRUE)
        endif()
      else()
        list(APPEND _new_dirs "${_dir}")
      endif()
    endforeach()
    list(REMOVE_DUPLICATES _new_dirs)
    set_property(TARGET ${_target} PROPERTY INTERFACE_INCLUDE_DIRECTORIES "${_new_dirs}")
    math(EXPR _fixed "${_fixed} + 1")
  endforeach()
  message(STATUS "fix_manylinux_includes: replaced /opt/python include dirs of ${_fixed} imported targets")
endfunction()

cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL _ros_wheels_fix_manylinux_includes)
