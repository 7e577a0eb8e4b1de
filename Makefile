# The two commands of a fresh machine (see README.md):
#   make serve   install what is missing, build, serve the app on http://127.0.0.1:8080
#   make test    install what is missing, run every check and test
# Both skip tools that are already installed.

.PHONY: serve test setup

serve:
	bash scripts/serve.sh

test:
	bash scripts/test.sh

setup:
	bash scripts/setup.sh
