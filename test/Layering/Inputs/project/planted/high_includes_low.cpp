// High reaches through Middle to Low.
#include "Kina/Low/Low.h"
