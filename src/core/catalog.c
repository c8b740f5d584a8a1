/* placeholder: being written */
#include "config.h"
#include "catalog.h"
