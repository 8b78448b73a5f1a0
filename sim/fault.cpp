#include "sim/fault.h"

namespace pmusim {

const char* vector_name(u8 v) {
    static const char* const names[] = {"#DE", "#DB", "NMI", "#BP", "#OF", "#BR", "#UD", "#NM",
                                        "#DF", "#09", "#TS", "#NP", "#SS", "#GP", "#PF", "#15",
                                        "#MF", "#AC", "#MC", "#XM", "#VE", "#CP"};
    return v < sizeof(names) / sizeof(names[0]) ? names[v] : "INT";
}

}  // namespace pmusim
