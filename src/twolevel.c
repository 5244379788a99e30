/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Two-level decomposition (paper section 3.4): filled in by issue 4. */
