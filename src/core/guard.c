/* placeholder: being written */
#include "config.h"
#include "guard.h"
