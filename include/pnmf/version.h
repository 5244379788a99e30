/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef PNMF_VERSION_H
#define PNMF_VERSION_H

#define PNMF_VERSION_MAJOR 0
#define PNMF_VERSION_MINOR 1
#define PNMF_VERSION_PATCH 0
#define PNMF_VERSION_STRING "0.1.0"

#endif /* PNMF_VERSION_H */
