# Tests: included by the Makefile. `make test` runs every tier.
test: all
	@echo "tests: not yet"
