# Warnings are errors everywhere, with gcc and clang alike (the two C-only ones only for C: the
# one C++ file, hipblaslt_check.cpp, is a compile-time check against a C++ header).
add_compile_options(-Wall -Wextra -Werror -Wshadow
                    $<$<COMPILE_LANGUAGE:C>:-Wstrict-prototypes$<SEMICOLON>-Wmissing-prototypes>)
add_compile_definitions(_GNU_SOURCE)
