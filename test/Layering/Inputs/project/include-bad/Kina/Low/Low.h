#include "Kina/Contract.h"
#include "Kina/Middle/Middle.h"
