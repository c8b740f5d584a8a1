/* placeholder: being written */
#include "config.h"
#include "settings.h"
