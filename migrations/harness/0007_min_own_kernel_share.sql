-- kiln defs set --min-own-kernel-share: the least share of the timed calls' GPU time a
-- solution's own kernels must do (integrity.own_kernel_share); NULL is the default.
ALTER TABLE definition_settings ADD COLUMN min_own_kernel_share REAL;
