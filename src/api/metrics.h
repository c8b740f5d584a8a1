/* GET /metrics: the Prometheus text format (metrics.c says what is in it). */
#ifndef PW_API_METRICS_H
#define PW_API_METRICS_H

#include "api/server.h"

enum MHD_Result pw_api_metrics(pw_api_request *r);

#endif
