#include "Kina/High/High.h"
#include "Kina/Middle/Middle.h"
#include "Kina/Contract.h"
int high() { return 3; }
