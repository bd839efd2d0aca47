"""The sub-commands' arguments: argparse and the names users choose among
(:mod:`pp_decomp.choices`), nothing that loads numpy or PyMC, so that
``pp-decomp --help`` is quick. :data:`pp_decomp.apps.cli.HANDLERS` names each
sub-command's function, imported when the command runs."""
