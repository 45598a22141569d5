module operator-hub.local/tests/kube/exec_plugin

go 1.26
