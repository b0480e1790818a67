#include "Kina/Low/Low.h"
int low() { return 1; }
