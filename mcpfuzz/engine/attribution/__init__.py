"""Where a finding's fix belongs: the SDK a server is built on, and the SDKs' known behaviours."""
