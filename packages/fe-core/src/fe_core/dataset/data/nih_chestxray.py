"""NIH Chest X-ray 14 (112120 frontal chest X-ray images), in 12 archives."""
from __future__ import annotations

import os
from typing import Optional

from fe_core.dataset.data._download import data_dir, extract, fetch
from fe_core.dataset.dir_dataset import DirDataset
from fe_core.export import fe_export

__all__ = ["load_data", "LINKS"]

LINKS = ("https://nihcc.box.com/shared/static/vfk49d74nhbxq3nqjg0900w5nvkorp5c.gz",
         "https://nihcc.box.com/shared/static/i28rlmbvmfjbl8p2n3ril0pptcmcu9d1.gz",
         "https://nihcc.box.com/shared/static/f1t00wrtdk94satdfb9olcolqx20z2jp.gz",
         "https://nihcc.box.com/shared/static/0aowwzs5lhjrceb3qp67ahp0rd1l1etg.gz",
         "https://nihcc.box.com/shared/static/v5e3goj22zr6h8tzualxfsqlqaygfbsn.gz",
         "https://nihcc.box.com/shared/static/asi7ikud9jwnkrnkj99jnpfkjdes7l6l.gz",
         "https://nihcc.box.com/shared/static/jn1b4mw4n6lnh74ovmcjb8y48h8xj07n.gz",
         "https://nihcc.box.com/shared/static/tvpxmn7qyrgl0w8wfh9kqfjskv6nmm1j.gz",
         "https://nihcc.box.com/shared/static/upyy3ml7qdumlgk2rfcvlb9k6gvqq2pj.gz",
         "https://nihcc.box.com/shared/static/l6nilvfa9cg3s28tqv1qc1olm3gnz54p.gz",
         "https://nihcc.box.com/shared/static/hhq8fkdgvcari67vfhs7ppg2w6ni4jze.gz",
         "https://nihcc.box.com/shared/static/ioqwiy20ihqwyr8pf4c24eazhh281pbu.gz")


@fe_export("fe.dataset.data.nih_chestxray.load_data")
def load_data(root_dir: Optional[str] = None) -> DirDataset:
    """Load and return the NIH Chest X-ray dataset.

    The 12 archives (about 42 GB) are downloaded one after the other (each resumable) and extracted into
    `images/`; a marker file records completion.

    Args:
        root_dir: The path to store the downloaded data. When `path` is not provided, the data will be saved into
            `fastestimator_data` under the user's home directory (or `$FE_DATA_DIR`).

    Returns:
        train_data: a DirDataset of the .png paths under "x".
    """
    directory = data_dir(root_dir, "NIH_Chestxray")
    done = os.path.join(directory, "images", ".complete")
    if not os.path.exists(done):
        for index, link in enumerate(LINKS):
            print(f"NIH Chest X-ray file {index + 1} / {len(LINKS)}")
            marker = os.path.join(directory, f".extracted_{index}")
            if os.path.exists(marker):
                continue
            archive = fetch(link, directory, file_name=f"images_{index}.tar.gz")
            staging = os.path.join(directory, f".part_{index}")
            os.makedirs(staging, exist_ok=True)
            extract(archive, staging, expected=["images"])
            os.makedirs(os.path.join(directory, "images"), exist_ok=True)
            source = os.path.join(staging, "images")
            for name in os.listdir(source):
                os.replace(os.path.join(source, name), os.path.join(directory, "images", name))
            os.rmdir(source)
            os.rmdir(staging)
            open(marker, "w").close()
        open(done, "w").close()
    return DirDataset(os.path.join(directory, "images"), file_extension=".png", recursive_search=False)
