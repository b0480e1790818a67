// a contract that includes LLVM
#include <llvm/ADT/StringRef.h>
