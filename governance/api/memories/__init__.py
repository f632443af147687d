"""Memories: write, list, read, supersede (the agent's operations) and confirm, reject, retire, forget
(the governing people's). Shapes in serializers.py, one view per operation in views.py."""
