# cmake -DLIB=<library> -DNM=<nm> -P FlagosCheckOneLibstdcxx.cmake
# Fails when LIB defines libstdc++'s own symbols, i.e. was linked with a
# static libstdc++ (however the toolchain came to do that): see
# FlagosTorch.cmake for why the core must share torch's.
execute_process(COMMAND ${NM} -D --defined-only ${LIB} OUTPUT_VARIABLE _symbols RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(WARNING "[flagos] ${NM} could not read ${LIB}: its libstdc++ linkage is not checked")
  return()
endif()
foreach(_own _ZNSt6locale7classicEv _ZNSt8ios_base4InitC1Ev)
  string(FIND "${_symbols}" " ${_own}" _at)
  if(NOT _at EQUAL -1)
    file(REMOVE ${LIB})  # else the next build would not check it again
    message(FATAL_ERROR " [flagos] ${LIB} defines libstdc++'s ${_own}: it was linked with a static "
            "libstdc++, a second copy beside the one torch uses, and the two crash together. Build with "
            "a g++ whose libstdc++ is shared, e.g. the system's: CC=gcc CXX=g++.")
  endif()
endforeach()
