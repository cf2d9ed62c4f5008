"""MPU's near-bank SIMT processors (Xie et al., MICRO 2021): the hybrid pipeline that extends
the SIMT core (:mod:`.hybrid`) and the static tables it reads (:mod:`.tables`)."""
