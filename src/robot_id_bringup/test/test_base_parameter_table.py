"""`robot_id base-parameters`: the base-parameter table of a URDF, and a bad joint name or a closed output in one
line."""

import pathlib
import subprocess
import sys

from robot_id_bringup.__main__ import main
from robot_id_model.robot_config import load_robot_config

IIWA14 = load_robot_config("iiwa14")


def test_base_parameter_table_from_urdf(capsys):
    urdf = pathlib.Path(IIWA14.urdf_path)
    assert main(["base-parameters", "--urdf", str(urdf), "--joints", ",".join(IIWA14.joint_names),
                 "--friction", "FV,FC"]) == 0
    out = capsys.readouterr().out
    assert "7 joints, friction terms ['FV', 'FC']" in out
    assert f"{7 * (10 + 2)} standard parameters -> " in out
    assert "FV7" in out


def test_bad_joint_name_exits_2_with_one_line(capsys):
    assert main(["base-parameters", "--urdf", str(IIWA14.urdf_path), "--joints", f"{IIWA14.joint_names[0]},nope"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "no movable joint named ['nope']" in err
    assert "Traceback" not in err


def test_an_output_closed_early_ends_in_one_line_not_a_traceback():
    """As `robot_id base-parameters ... | head -1` does when head has gone before the table is written."""
    command = [sys.executable, "-c", "import sys; from robot_id_bringup.__main__ import main; sys.exit(main())",
               "base-parameters", "--robot", "iiwa14"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as child:
        child.stdout.close()
        err = child.stderr.read()
        assert child.wait(timeout=60) == 2
    assert err == "error: the output was closed before its end (broken pipe)\n", err
