# Writes ${OUT}, a C++ file defining twinrail::lab::${FUNC}(): the bytes of ${IN}.
file(READ ${IN} hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
get_filename_component(name ${IN} NAME)
file(WRITE ${OUT} "// generated from ${name} by lab/lib/bpf/embed.cmake\n"
     "#include <string_view>\nnamespace twinrail::lab {\n"
     "static const unsigned char kObject[] = {${bytes}};\n"
     "std::string_view ${FUNC}() {\n"
     "    return {reinterpret_cast<const char*>(kObject), sizeof(kObject)};\n}\n}\n")
