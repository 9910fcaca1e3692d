# robot_id: `make demo` and `make test` are all a fresh machine needs.
SHELL := /bin/bash
ENV := source env.sh &&

.PHONY: setup build test lint demo demo-offline bench results clean

setup:
	@scripts/setup_workspace.sh

build: setup

lint: setup
	@$(ENV) ruff check src benchmarks scripts test

test: setup lint
	@$(ENV) colcon test --executor sequential --return-code-on-test-failure --pytest-args --durations=12 \
		--event-handlers console_direct+ status- summary+ ; rc=$$?; \
		summary=$$(colcon test-result --all | tail -1); echo "$$summary"; \
		if [[ "$$summary" == "Summary: 0 tests"* ]]; then echo "no tests ran"; exit 1; fi; \
		echo "workspace-wide tests (test/)"; python -m pytest test/ -q -p no:cacheprovider; top=$$?; \
		if [ $$rc -ne 0 ]; then exit $$rc; fi; exit $$top

demo: setup
	@$(ENV) python -m robot_id_bringup.demo --robot iiwa14

demo-offline: setup
	@$(ENV) python -m robot_id_bringup.offline_demo --robot iiwa14 --out demo_output

bench: setup
	@$(ENV) python scripts/run_benchmarks.py; rc=$$?; python scripts/render_results.py && exit $$rc

results:
	@$(ENV) python scripts/render_results.py

clean:
	rm -rf build install log .venv .venv-install.log
