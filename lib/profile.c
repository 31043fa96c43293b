/* profile.c — kernel parameters: the families' built-in defaults per device type, fitted to the
 * device's limits. (Profile files from ocx-tune will be the first source consulted here.) */
#include "config.h"
#include "ocx_internal.h"

#include <string.h>

static int is_pow2(int v) { return v > 0 && (v & (v - 1)) == 0; }

/* Shrinks parameters, largest range first, until the family accepts them on this device. Every
 * family's minimum values must be legal on any device (work-groups of 1, a few bytes of local
 * memory), so this always ends. */
static void fit(int *v, const ocx__family *fam, const ocx_device_info *dev, ocx_dtype dtype)
{
    for (int guard = 0; guard < 256 && fam->invalid && fam->invalid(v, dev, dtype); guard++) {
        int best = -1;
        for (unsigned i = 0; i < fam->nparams; i++)
            if (v[i] > fam->params[i].min && (best < 0 || v[i] / fam->params[i].min > v[best] / fam->params[best].min))
                best = (int)i;
        if (best < 0) break;
        v[best] = fam->params[best].pow2 ? v[best] / 2 : v[best] - 1;
        if (v[best] < fam->params[best].min) v[best] = fam->params[best].min;
    }
}

ocx_status ocx__params_get(const ocx_context *ctx, const ocx__family *fam, ocx_dtype dtype, ocx__params *out)
{
    OCX__FAIL_IF(fam->nparams > OCX__MAX_PARAMS, OCX_ERR_INTERNAL, "family %s: too many parameters", fam->name);
    memset(out, 0, sizeof *out);
    out->family = fam;
    out->origin = "built-in";
    int cpu = ctx->info.type == OCX_DEVICE_CPU;
    for (unsigned i = 0; i < fam->nparams; i++) {
        const ocx__param_def *p = &fam->params[i];
        int v = cpu ? p->def_cpu : p->def_gpu;
        if (v < p->min) v = p->min;
        if (v > p->max) v = p->max;
        if (p->pow2 && !is_pow2(v)) v = p->min;
        out->v[i] = v;
    }
    fit(out->v, fam, &ctx->info, dtype);
    const char *why = fam->invalid ? fam->invalid(out->v, &ctx->info, dtype) : NULL;
    OCX__FAIL_IF(why, OCX_ERR_INTERNAL, "family %s: no legal parameters on this device: %s", fam->name, why);
    return OCX_OK;
}

int ocx__param(const ocx__params *p, const char *name)
{
    for (unsigned i = 0; i < p->family->nparams; i++)
        if (strcmp(p->family->params[i].name, name) == 0) return p->v[i];
    return 0;
}

void ocx__params_defines(const ocx__params *p, char *buf, size_t cap)
{
    size_t o = strlen(buf);
    for (unsigned i = 0; i < p->family->nparams && o < cap; i++)
        o += (size_t)snprintf(buf + o, cap - o, " -D%s=%d", p->family->params[i].name, p->v[i]);
}
