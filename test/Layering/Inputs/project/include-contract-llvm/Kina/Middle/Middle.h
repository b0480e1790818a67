#include "Kina/Low/Low.h"
