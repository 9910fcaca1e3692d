import pathlib

from conftest import random_arm_urdf

from robot_id_model.__main__ import main


def test_base_parameter_table_from_urdf(tmp_path: pathlib.Path, capsys):
    urdf = tmp_path / "arm.urdf"
    urdf.write_text(random_arm_urdf(4, seed=0))
    assert main(["base-parameters", "--urdf", str(urdf), "--friction", "FV,FC"]) == 0
    out = capsys.readouterr().out
    assert "4 joints, friction terms ['FV', 'FC']" in out
    assert "48 standard parameters -> " in out
    assert "FV4" in out


def test_bad_joint_name_exits_2_with_one_line(tmp_path: pathlib.Path, capsys):
    urdf = tmp_path / "arm.urdf"
    urdf.write_text(random_arm_urdf(4, seed=0))
    assert main(["base-parameters", "--urdf", str(urdf), "--joints", "j1,nope"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "no movable joint named ['nope']" in err
    assert "Traceback" not in err
