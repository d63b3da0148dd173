"""A run as a plan: phases executed in order over one RunContext and one Budget, then finishing."""
