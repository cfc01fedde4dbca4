"""The assoc model's commands (kilobit.models.commands): `kilobit eval` of an assoc file; its
`kilobit train` is not written yet."""
from kilobit.core.errors import KilobitError


def add_train_args(t):
    from kilobit.models.commands import add_data_args
    add_data_args(t)
    t.add_argument("-o", "--output", required=True)


def train(a):
    raise KilobitError("kilobit train assoc is not written yet")


def evaluate(a, blob):
    raise KilobitError("kilobit eval does not take assoc models yet")
