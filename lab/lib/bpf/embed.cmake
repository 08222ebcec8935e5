# Writes ${OUT}, a C++ file defining twinrail::lab::bondHashObject(): the bytes of ${IN}.
file(READ ${IN} hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
file(WRITE ${OUT} "// generated from bond_hash.o by lab/lib/bpf/embed.cmake\n"
     "#include <string_view>\nnamespace twinrail::lab {\n"
     "static const unsigned char kBondHash[] = {${bytes}};\n"
     "std::string_view bondHashObject() {\n"
     "    return {reinterpret_cast<const char*>(kBondHash), sizeof(kBondHash)};\n}\n}\n")
