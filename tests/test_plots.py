from genprobe.analysis.plots import end_labels


def test_seeds_that_end_together_share_a_label_and_labels_keep_apart():
    labels = end_labels({"1": (3, 0.0), "2": (3, 0.0), "3": (3, 1.0), "4": (5, 1.0)}, gap=4.0)
    assert labels == {
        "seeds 1, 2": (3, 0.0, 0.0),
        "seed 3": (3, 1.0, 4.0),  # pushed up off the label below it
        "seed 4": (5, 1.0, 1.0),  # another epoch: stays on its point
    }
    many = end_labels({str(s): (1, 0.0) for s in range(8)})
    assert list(many) == ["seeds 0, 1, 2, 3, 4 and 3 more"]
