import ast
import pathlib
import unittest

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "concierge_server"


class Python39(unittest.TestCase):
    def test_the_package_parses_as_python_3_9(self):
        # This machine's Python is newer than the oldest the package promises; the grammar is checked against 3.9's.
        for source in sorted(PACKAGE.glob("*.py")):
            with self.subTest(source=source.name):
                ast.parse(source.read_text(encoding="utf-8"), filename=str(source), feature_version=(3, 9))


if __name__ == "__main__":
    unittest.main()
