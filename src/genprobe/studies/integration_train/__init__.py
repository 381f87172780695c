"""Training the integration transformer (`genprobe integration train`): its results and report."""
