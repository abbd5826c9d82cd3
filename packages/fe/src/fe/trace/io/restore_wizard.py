"""`RestoreWizard`."""
from fe_core.trace.io.restore_wizard import RestoreWizard

__all__ = ["RestoreWizard"]
