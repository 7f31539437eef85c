# GPUPRIO_SANITIZE=address,undefined or thread instruments every target. UBSan does not recover,
# so a report fails the test that caused it.
if(GPUPRIO_SANITIZE)
  set(_san -fsanitize=${GPUPRIO_SANITIZE} -fno-omit-frame-pointer)
  if(GPUPRIO_SANITIZE MATCHES "undefined")
    list(APPEND _san -fno-sanitize-recover=all)
  endif()
  add_compile_options(${_san})
  add_link_options(${_san})
endif()
