# Warnings are errors everywhere, with gcc and clang alike.
add_compile_options(-Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes)
add_compile_definitions(_GNU_SOURCE)
