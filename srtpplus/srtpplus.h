/* SRTP+ v1 (SRTPPLUS.md): the one header users of the library include. */
#ifndef SRTPPLUS_H
#define SRTPPLUS_H

#include "srtpplus_budget.h"
#include "srtpplus_chain.h"
#include "srtpplus_kdf.h"
#include "srtpplus_prn.h"
#include "srtpplus_profile.h"
#include "srtpplus_receiver.h"
#include "srtpplus_scheme.h"
#include "srtpplus_sender.h"
#include "srtpplus_status.h"
#include "srtpplus_verdict.h"

#endif
