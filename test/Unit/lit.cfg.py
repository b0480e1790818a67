# -*- Python -*-
# The GoogleTest executables of unittests/ (every *Tests binary), a suite
# nested in check-kina.
import os

import lit.formats

config.name = "KINA-Unit"
config.suffixes = []
config.test_source_root = os.path.join(config.kina_obj_root, "unittests")
config.test_exec_root = config.test_source_root
config.test_format = lit.formats.GoogleTest(".", "Tests")
